#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> values(n);
    for (int i = 0; i < n; ++i) {
        int x;
        cin >> x;
        values[i] = x % 4;
    }
    int candidate = -1;
    int votes = 0;
    int switches = 0;
    for (int v : values) {
        if (votes == 0) {
            candidate = v;
            votes = 1;
            switches += 1;
        } else if (v == candidate) {
            votes += 1;
        } else {
            votes -= 1;
        }
    }
    int support = 0;
    for (int v : values) {
        if (v == candidate) {
            support += 1;
        }
    }
    cout << candidate << " " << votes << " " << switches << " " << support << "\n";
    return 0;
}
