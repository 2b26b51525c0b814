#include <iostream>
#include <unordered_map>
#include <vector>
using namespace std;

int main() {
    long long limit;
    cin >> limit;
    unordered_map<long long, int> cache;
    cache[1] = 1;
    long long best_n = 1;
    int best_len = 1;
    long long start = 2;
    for (start = 2; start <= limit; ++start) {
        long long n = start;
        vector<long long> path;
        while (!cache.count(n)) {
            path.push_back(n);
            n = n % 2 == 0 ? n / 2 : 3 * n + 1;
        }
        int length = cache[n];
        for (auto it = path.rbegin(); it != path.rend(); ++it) cache[*it] = ++length;
        if (length > best_len) {
            best_n = start;
            best_len = length;
        }
    }
    cout << best_n << " " << best_len << "\n";
    return 0;
}
