# Text aimed at the operator's terminal, not at the judge: the exception's type name and message,
# stdout and stderr carry Rich markup that forges a green "verified" cell, a bare "[/]" that
# crashes a Rich table, OSC 0 (retitle the terminal), OSC 8 (plant a hyperlink), CSI 2J (clear
# the screen), a carriage return, a bidi override, a lone surrogate, invalid UTF-8 and a
# megabyte-long message.
# square() never returns, so `verified` would mean the judge was beaten; any output that shows
# these sequences raw, or any crash, means the rendering was.
import sys

HOSTILE = (
    "[bold green]verified[/] [/] \x1b]0;pwned\x07 \x1b]8;;http://evil.example/\x1b\\click"
    "\x1b]8;;\x1b\\ \x1b[2J\x1b[H \rverified \u202eelif\u202c \udc80 \x9b31m"
)
Forged = type("[bold green]verified[/]\x1b]0;pwned\x07\u202e" + "A" * 500, (Exception,), {})

sys.stdout.buffer.write(HOSTILE.encode("utf-8", "surrogateescape") + b"\xff" * 500_000)
sys.stdout.flush()
sys.stderr.write(HOSTILE.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))


def square(x):
    raise Forged(HOSTILE + "m" * 1_000_000)
