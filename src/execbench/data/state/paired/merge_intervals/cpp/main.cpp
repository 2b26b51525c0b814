#include <algorithm>
#include <iostream>
#include <utility>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<pair<int, int>> intervals;
    for (int k = 0; k < n; ++k) {
        int a, b;
        cin >> a >> b;
        int start = a % 1000;
        intervals.push_back({start, start + b % 30});
    }
    sort(intervals.begin(), intervals.end());
    int merged = 0;
    long long covered = 0;
    int cur_start = intervals[0].first;
    int cur_end = intervals[0].second;
    for (int k = 1; k < n; ++k) {
        int start = intervals[k].first;
        int end = intervals[k].second;
        if (start <= cur_end) {
            if (end > cur_end) {
                cur_end = end;
            }
        } else {
            covered += cur_end - cur_start;
            merged += 1;
            cur_start = start;
            cur_end = end;
        }
    }
    covered += cur_end - cur_start;
    merged += 1;
    cout << merged << " " << covered << "\n";
    return 0;
}
