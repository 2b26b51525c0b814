#include <iostream>
#include <map>
#include <string>
using namespace std;

int main() {
    string text;
    getline(cin, text);
    map<char, int> counts;
    int letters = 0;
    char best_letter = 0;
    int best_count = 0;
    for (char ch : text) {
        if (ch == ' ') {
            continue;
        }
        letters += 1;
        counts[ch] += 1;
        if (counts[ch] > best_count || (counts[ch] == best_count && ch < best_letter)) {
            best_count = counts[ch];
            best_letter = ch;
        }
    }
    for (const auto& entry : counts) {
        cout << entry.first << " " << entry.second << "\n";
    }
    cout << letters << " " << best_letter << " " << best_count << "\n";
    return 0;
}
