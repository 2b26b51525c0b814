#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    const int step = 3;
    vector<int> people;
    for (int i = 1; i <= n; ++i) {
        people.push_back(i);
    }
    int index = 0;
    int removed = 0;
    int last_out = 0;
    while (people.size() > 1) {
        index = (index + step - 1) % people.size();
        last_out = people[index];
        people.erase(people.begin() + index);
        removed += 1;
    }
    cout << people[0] << " " << last_out << " " << removed << "\n";
    return 0;
}
