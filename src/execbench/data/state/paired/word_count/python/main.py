import sys

data = sys.stdin.read().split()
n = int(data[0])
counts = {}
longest_run = 0
run = 0
previous = ""
for word in data[1:1 + n]:
    counts[word] = counts.get(word, 0) + 1
    if word == previous:
        run += 1
    else:
        run = 1
    previous = word
    longest_run = max(longest_run, run)
for word in sorted(counts):
    print(word, counts[word])
print(longest_run)
