def square(x):
    raise SystemExit
