#include <algorithm>
#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> values(n);
    for (int i = 0; i < n; ++i) {
        cin >> values[i];
    }
    sort(values.begin(), values.end());
    int found = 0;
    long long probes = 0;
    for (int q = 0; q < n; ++q) {
        int target = values[q] + q % 3 - 1;
        int lo = 0;
        int hi = n - 1;
        while (lo <= hi) {
            int mid = (lo + hi) / 2;
            probes += 1;
            if (values[mid] == target) {
                found += 1;
                break;
            }
            if (values[mid] < target) {
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
    }
    cout << found << " " << probes << "\n";
    return 0;
}
