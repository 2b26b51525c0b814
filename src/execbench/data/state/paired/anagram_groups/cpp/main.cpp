#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    map<string, vector<string>> groups;
    int added = 0;
    int k = 0;
    for (k = 0; k < n; ++k) {
        string word;
        cin >> word;
        string key = word.substr(0, 3);
        sort(key.begin(), key.end());
        vector<string>& members = groups[key];
        if (find(members.begin(), members.end(), word) == members.end()) {
            members.push_back(word);
            added += 1;
        }
    }
    cout << added << "\n";
    for (auto& entry : groups) {
        vector<string> members = entry.second;
        sort(members.begin(), members.end());
        cout << entry.first << " " << members.size();
        for (const string& word : members) {
            cout << " " << word;
        }
        cout << "\n";
    }
    return 0;
}
