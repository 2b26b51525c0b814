#include <iostream>
#include <vector>
using namespace std;

int main() {
    int target;
    cin >> target;
    vector<int> coins = {2, 3, 7, 11};
    const long long MOD = 1000000007;
    vector<long long> ways(target + 1, 0);
    ways[0] = 1;
    int amount = 0;
    for (int coin : coins) {
        for (amount = coin; amount <= target; ++amount) {
            ways[amount] = (ways[amount] + ways[amount - coin]) % MOD;
        }
    }
    cout << ways[target] << " " << ways[target / 2] << "\n";
    return 0;
}
