"""The model report card: an analyser's levels against a maintainer's labels."""
