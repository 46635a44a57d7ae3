// HitchAnalysis module; see ../../docs and ARCHITECTURE notes in the README.
