"""The project's package: network, training logic (module), data and command line."""
