"""The `playground` sub-commands, one module each: `add_arguments(parser)` (cheap) and `main(args) -> int`."""
