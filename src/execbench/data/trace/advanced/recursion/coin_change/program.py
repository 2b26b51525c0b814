def ways(amount, coins, index, memo):
    if amount == 0:
        return 1
    if amount < 0 or index == len(coins):
        return 0
    key = (amount, index)
    if key in memo:
        return memo[key]
    use = ways(amount - coins[index], coins, index, memo)
    skip = ways(amount, coins, index + 1, memo)
    memo[key] = use + skip
    return use + skip


def count_ways(amount, coins):
    return ways(amount, coins, 0, {})
