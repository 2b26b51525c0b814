import sys

steps = int(sys.stdin.read().split()[0])
width = 40
cells = [0] * width
cells[width - 1] = 1
rule = 110
births = 0
for step in range(steps):
    nxt = [0] * width
    for i in range(width):
        left = cells[i - 1] if i > 0 else 0
        right = cells[i + 1] if i + 1 < width else 0
        pattern = left * 4 + cells[i] * 2 + right
        nxt[i] = (rule >> pattern) & 1
        if nxt[i] == 1 and cells[i] == 0:
            births += 1
    cells = nxt
print("".join("#" if v else "." for v in cells))
print(sum(cells), births)
