"""Pure scheduling logic: no I/O."""
