#include <algorithm>
#include <iostream>
#include <map>
#include <string>
using namespace std;

int main() {
    int n;
    cin >> n;
    map<string, int> counts;
    int longest_run = 0;
    int run = 0;
    string previous = "";
    for (int k = 0; k < n; ++k) {
        string word;
        cin >> word;
        counts[word] += 1;
        if (word == previous) {
            run += 1;
        } else {
            run = 1;
        }
        previous = word;
        longest_run = max(longest_run, run);
    }
    for (const auto& entry : counts) {
        cout << entry.first << " " << entry.second << "\n";
    }
    cout << longest_run << "\n";
    return 0;
}
