import sys

data = sys.stdin.read().split()
n = int(data[0])
counts = [0] * 100
for x in data[1:1 + n]:
    counts[int(x) % 100] += 1
output = []
value = 0
while value < 100:
    repeat = counts[value]
    while repeat > 0:
        output.append(value)
        repeat -= 1
    value += 1
checksum = 0
for i in range(len(output)):
    checksum = (checksum * 7 + output[i]) % 1000003
print(len(output), output[len(output) // 2], checksum)
