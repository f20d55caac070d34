"""The network: a plain ``nn.Module`` that knows nothing about training."""

from torch import Tensor, nn


class MLP(nn.Module):
    """A multi-layer perceptron mapping flattened inputs to class logits."""

    def __init__(self, num_features: int, num_classes: int, hidden_dim: int, dropout: float):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Flatten(),
            nn.Linear(num_features, hidden_dim),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden_dim, hidden_dim),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden_dim, num_classes),
        )

    def forward(self, x: Tensor) -> Tensor:
        return self.layers(x)  # (batch, *features) -> (batch, num_classes)
