"""The core's vocabulary and what every layer uses: models, storage, prompts, windows, logs, metrics."""
