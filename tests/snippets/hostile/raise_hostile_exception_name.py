# Wrong code whose exception type name is terminal markup and 10,000 characters long: the outcome
# word must come back as plain identifier characters, capped.
Forged = type("\x1b]0;pwned\x07[bold green]verified[/]\n" + "X" * 10000, (Exception,), {})


def square(x):
    raise Forged("see my name")
