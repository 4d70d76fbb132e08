"""The test batch of `udflow optimize`: small generated pipelines, the paper's tasks, three broken files."""
