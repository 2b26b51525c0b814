#include <iostream>
#include <vector>
using namespace std;

int main() {
    int target;
    cin >> target;
    vector<int> coins = {1, 7, 10, 22};
    vector<int> best(target + 1, -1);
    best[0] = 0;
    for (int amount = 1; amount <= target; ++amount) {
        int fewest = -1;
        for (int coin : coins) {
            if (coin <= amount && best[amount - coin] >= 0) {
                int candidate = best[amount - coin] + 1;
                if (fewest < 0 || candidate < fewest) {
                    fewest = candidate;
                }
            }
        }
        best[amount] = fewest;
    }
    long long total = 0;
    for (int v : best) {
        total += v;
    }
    cout << best[target] << "\n";
    cout << total % 1000003 << "\n";
    return 0;
}
