words = "the quick brown fox".split()
print(" ".join(sorted(words, key=len)))
print(max(words, key=len).upper())
