"""``python -m theorylab.phases ARGS``: the command ``theorylab phases ARGS``, with the
same flags, output and exit codes (its module: ``theorylab.commands.phases``)."""

if __name__ == "__main__":
    from theorylab.commands import run_as_module

    run_as_module("phases")
