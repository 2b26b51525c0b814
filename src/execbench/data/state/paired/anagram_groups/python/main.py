import sys

data = sys.stdin.read().split()
n = int(data[0])
groups = {}
added = 0
for word in data[1:1 + n]:
    key = "".join(sorted(word[:3]))
    if key not in groups:
        groups[key] = []
    if word not in groups[key]:
        groups[key].append(word)
        added += 1
print(added)
for key in sorted(groups):
    print(key, len(groups[key]), " ".join(sorted(groups[key])))
