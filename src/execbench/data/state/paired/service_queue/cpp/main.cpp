#include <algorithm>
#include <iostream>
#include <vector>
using namespace std;

struct Customer {
    int arrival;
    int service;
    int wait;
};

int main() {
    int n;
    cin >> n;
    vector<Customer> customers;
    int clock = 0;
    for (int k = 0; k < n; ++k) {
        int gap, work;
        cin >> gap >> work;
        clock += gap % 10;
        customers.push_back(Customer{clock, work % 12 + 1, 0});
    }
    int free_at = 0;
    long long total_wait = 0;
    int longest = 0;
    for (Customer& c : customers) {
        int start = max(free_at, c.arrival);
        c.wait = start - c.arrival;
        free_at = start + c.service;
        total_wait += c.wait;
        longest = max(longest, c.wait);
    }
    cout << total_wait << " " << longest << " " << free_at << "\n";
    return 0;
}
