import sys

rounds = int(sys.stdin.read().split()[0])
term = "1"
for r in range(rounds):
    out = []
    i = 0
    while i < len(term):
        j = i
        while j < len(term) and term[j] == term[i]:
            j += 1
        out.append(str(j - i) + term[i])
        i = j
    term = "".join(out)
print(len(term), term[:30], term.count("1"))
