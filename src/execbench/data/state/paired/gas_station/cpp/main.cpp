#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> gas(n), cost(n);
    for (int k = 0; k < n; ++k) {
        int a, b;
        cin >> a >> b;
        gas[k] = a % 20;
        cost[k] = b % 19;
    }
    int start = 0;
    int tank = 0;
    int balance = 0;
    int resets = 0;
    for (int i = 0; i < n; ++i) {
        tank += gas[i] - cost[i];
        balance += gas[i] - cost[i];
        if (tank < 0) {
            start = i + 1;
            tank = 0;
            resets += 1;
        }
    }
    cout << (balance >= 0 ? start : -1) << " " << balance << " " << resets << "\n";
    return 0;
}
