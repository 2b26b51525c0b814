#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n, k;
    cin >> n >> k;
    vector<int> people(n);
    for (int i = 0; i < n; ++i) people[i] = i + 1;
    int index = 0, removed = 0, last_out = 0;
    while (people.size() > 1) {
        index = (index + k - 1) % people.size();
        last_out = people[index];
        people.erase(people.begin() + index);
        ++removed;
    }
    cout << people[0] << " " << last_out << " " << removed << "\n";
    return 0;
}
