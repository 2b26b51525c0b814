#include <algorithm>
#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> stack;
    int errors = 0;
    int peak = 0;
    for (int k = 0; k < n; ++k) {
        int a0, b0;
        cin >> a0 >> b0;
        int op = a0 % 4;
        int value = b0 % 100;
        if (op <= 1) {
            stack.push_back(value);
        } else if (op == 2) {
            if (stack.empty()) {
                errors += 1;
                continue;
            }
            stack.pop_back();
        } else {
            if (stack.size() < 2) {
                errors += 1;
                continue;
            }
            int b = stack.back();
            stack.pop_back();
            int a = stack.back();
            stack.pop_back();
            stack.push_back((a + b) % 1000);
        }
        peak = max(peak, (int)stack.size());
    }
    long long total = 0;
    for (int v : stack) {
        total += v;
    }
    cout << stack.size() << " " << total << " " << errors << " " << peak << "\n";
    return 0;
}
