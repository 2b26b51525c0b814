#include <iostream>
#include <vector>
using namespace std;

struct Account {
    int balance;
    int sent;
    int refused;
};

int main() {
    int count, n;
    cin >> count >> n;
    vector<Account> accounts(count, Account{100, 0, 0});
    long long moved = 0;
    for (int k = 0; k < n; ++k) {
        int src, dst, amount;
        cin >> src >> dst >> amount;
        if (src == dst) {
            continue;
        }
        if (accounts[src].balance < amount) {
            accounts[src].refused += 1;
            continue;
        }
        accounts[src].balance -= amount;
        accounts[dst].balance += amount;
        accounts[src].sent += 1;
        moved += amount;
    }
    for (int i = 0; i < count; ++i) {
        cout << i << " " << accounts[i].balance << " " << accounts[i].sent << " " << accounts[i].refused << "\n";
    }
    cout << moved << "\n";
    return 0;
}
