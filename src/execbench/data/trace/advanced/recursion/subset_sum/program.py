def search(nums, index, remaining, chosen):
    if remaining == 0:
        return list(chosen)
    if index == len(nums) or remaining < 0:
        return None
    chosen.append(nums[index])
    found = search(nums, index + 1, remaining - nums[index], chosen)
    chosen.pop()
    if found is not None:
        return found
    return search(nums, index + 1, remaining, chosen)


def find_subset(nums, target):
    return search(nums, 0, target, [])
