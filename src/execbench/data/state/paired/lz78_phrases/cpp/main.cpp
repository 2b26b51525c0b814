#include <iostream>
#include <map>
#include <string>
using namespace std;

int main() {
    string text;
    cin >> text;
    map<string, int> dictionary;
    dictionary[""] = 0;
    string phrase = "";
    int emitted = 0;
    long long checksum = 0;
    for (char ch : text) {
        string candidate = phrase + ch;
        if (dictionary.count(candidate)) {
            phrase = candidate;
            continue;
        }
        checksum = (checksum * 31 + dictionary[phrase] * 3 + (int)ch) % 1000003;
        int next_code = dictionary.size();
        dictionary[candidate] = next_code;
        emitted += 1;
        phrase = "";
    }
    cout << emitted << " " << dictionary.size() << " " << phrase.size() << " " << checksum << "\n";
    return 0;
}
