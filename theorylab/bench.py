"""``python -m theorylab.bench ARGS``: the command ``theorylab bench ARGS``, with the
same flags, output and exit codes (its module: ``theorylab.commands.bench``)."""

if __name__ == "__main__":
    from theorylab.commands import run_as_module

    run_as_module("bench")
