#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    vector<int> counts(100, 0);
    for (int i = 0; i < n; ++i) {
        int x;
        cin >> x;
        counts[x % 100] += 1;
    }
    vector<int> output;
    int value = 0;
    while (value < 100) {
        int repeat = counts[value];
        while (repeat > 0) {
            output.push_back(value);
            repeat -= 1;
        }
        value += 1;
    }
    long long checksum = 0;
    for (size_t i = 0; i < output.size(); ++i) {
        checksum = (checksum * 7 + output[i]) % 1000003;
    }
    cout << output.size() << " " << output[output.size() / 2] << " " << checksum << "\n";
    return 0;
}
