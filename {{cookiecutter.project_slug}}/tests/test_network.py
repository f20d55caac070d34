"""The network and the training step on their own, without a Trainer."""

import torch

from {{ cookiecutter.package_name }}.module import Classifier
from {{ cookiecutter.package_name }}.network import MLP


def test_mlp_maps_any_input_shape_to_class_logits():
    net = MLP(num_features=64, num_classes=10, hidden_dim=32, dropout=0.1)
    assert net(torch.randn(5, 64)).shape == (5, 10)
    assert net(torch.randn(5, 1, 8, 8)).shape == (5, 10)  # flattened first


def test_model_overfits_a_single_batch():
    torch.manual_seed(0)
    model = Classifier(num_features=64, num_classes=10, hidden_dim=64, dropout=0.0)
    batch = (torch.randn(16, 64), torch.randint(0, 10, (16,)))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(200):
        loss, _, _ = model.model_step(batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    loss, preds, y = model.model_step(batch)
    assert loss.item() < 0.01
    assert torch.equal(preds, y)
