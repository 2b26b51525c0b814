import sys

text = sys.stdin.read().split()[0]
dictionary = {"": 0}
phrase = ""
emitted = 0
checksum = 0
for ch in text:
    candidate = phrase + ch
    if candidate in dictionary:
        phrase = candidate
        continue
    checksum = (checksum * 31 + dictionary[phrase] * 3 + ord(ch)) % 1000003
    dictionary[candidate] = len(dictionary)
    emitted += 1
    phrase = ""
print(emitted, len(dictionary), len(phrase), checksum)
