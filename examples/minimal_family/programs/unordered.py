# a set of strings iterates in hash order: the runs under two hash seeds disagree (rejected)
print(list({"apple", "banana", "cherry", "damson", "elder", "fig", "grape"}))
