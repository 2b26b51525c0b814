total = 0
for i in range(1, 5):
    total += i * i
    print(i, total)
