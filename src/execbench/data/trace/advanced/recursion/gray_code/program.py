def gray(bits):
    if bits == 0:
        return [""]
    shorter = gray(bits - 1)
    result = []
    for code in shorter:
        result.append("0" + code)
    for code in reversed(shorter):
        result.append("1" + code)
    return result
