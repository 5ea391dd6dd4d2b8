def square(x):
    while True:
        pass
