#include <algorithm>
#include <iostream>
#include <string>
using namespace std;

int main() {
    int rounds;
    cin >> rounds;
    string term = "1";
    for (int r = 0; r < rounds; ++r) {
        string out;
        size_t i = 0;
        while (i < term.size()) {
            size_t j = i;
            while (j < term.size() && term[j] == term[i]) {
                j += 1;
            }
            out += to_string(j - i) + term[i];
            i = j;
        }
        term = out;
    }
    cout << term.size() << " " << term.substr(0, 30) << " " << count(term.begin(), term.end(), '1') << "\n";
    return 0;
}
