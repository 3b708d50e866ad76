"""The evidence the offline analyser weighs, one module per kind.

Each module reads its own signs in the paths and patches, weighs the message's words (read once
into the `TitleInfo` by words.py and title.py), and turns them into `facts` (a level and why),
`risks` (what may break and what to do) and `insights` (notes by aspect). They import the records
(context.py) and the readers below them (title, words, paths, patch, stats), never each other:

  breaking      the author declares a breaking change
  security      fixes, trust boundaries, refused input, sensitive paths, pipeline hardening
  removal       deleted public files, definitions and flags; moved modules
  behaviour     reverts, defaults, new flags, crashes, hangs, the public surface, touchy areas
  dependencies  major bumps, shipped versus development-only dependency changes
  release       release commits, how artefacts are built, supported runtimes, the pipeline
  size          how much source changes, and the generic risks when nothing specific applies
  scope         ceilings (non-runtime, tooling, mechanical sweeps, previews) and the low baseline

The `order` of a fact or risk is where it is named (lower first). They follow seriousness, not
module boundaries:

  facts   10 breaking · 20–22 security · 30–34 removal · 40–42 revert, defaults, new flags ·
          43 major bump · 44–45 release build, crash fixed in the build · 46 pathology ·
          47 runtime support · 48 release commit · 49 public surface · 50 size
  risks   10 breaking · 20–22 security · 30–33 removal · 40–41 revert, defaults ·
          42 release build · 43 dependencies · 44–45 crash, pathology · 46 runtime support ·
          47–56 areas (parser, server, output, recursion, messages, false positives, memory,
          concurrency, new checks, GPU) · fallbacks: 60 release · 61 no tests · 62–65 by type ·
          66 pipeline
"""

from __future__ import annotations

# The modules are imported by name where they are used (decide.py lists the ones it combines, as
# KINDS): a package that imported them all would be one more floor under everything above it.
