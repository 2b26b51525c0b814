#include <iostream>
#include <map>
using namespace std;

int main() {
    int n;
    cin >> n;
    map<int, int> stock;
    int shortages = 0;
    for (int k = 0; k < n; ++k) {
        int a, b;
        cin >> a >> b;
        int item = a % 9;
        int qty = b % 20 - 8;
        int have = stock.count(item) ? stock[item] : 0;
        if (have + qty < 0) {
            shortages += 1;
            continue;
        }
        stock[item] = have + qty;
    }
    for (const auto& entry : stock) {
        if (entry.second > 0) {
            cout << entry.first << " " << entry.second << "\n";
        }
    }
    cout << shortages << "\n";
    return 0;
}
