#include <iostream>
#include <set>
using namespace std;

int main() {
    int limit;
    cin >> limit;
    int happy = 0;
    long long steps_total = 0;
    for (int start = 1; start <= limit; ++start) {
        set<int> seen;
        int x = start;
        while (x != 1 && !seen.count(x)) {
            seen.insert(x);
            int s = 0;
            while (x > 0) {
                s += (x % 10) * (x % 10);
                x /= 10;
            }
            x = s;
            steps_total += 1;
        }
        if (x == 1) {
            happy += 1;
        }
    }
    cout << happy << " " << steps_total << "\n";
    return 0;
}
