"""``python -m theorylab.figures ARGS``: the command ``theorylab figures ARGS``, with the
same flags, output and exit codes (its module: ``theorylab.commands.figures``)."""

if __name__ == "__main__":
    from theorylab.commands import run_as_module

    run_as_module("figures")
