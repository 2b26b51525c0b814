#include <iostream>
#include <vector>
using namespace std;

int main() {
    int n;
    cin >> n;
    const int MOD = 1009;
    const int size = 4;
    vector<vector<long long>> a(size, vector<long long>(size));
    vector<vector<long long>> result(size, vector<long long>(size, 0));
    for (int i = 0; i < size; ++i) {
        for (int j = 0; j < size; ++j) {
            a[i][j] = (i * size + j) % 7 + 1;
        }
        result[i][i] = 1;
    }
    int multiplications = 0;
    for (int step = 0; step < n; ++step) {
        vector<vector<long long>> product(size, vector<long long>(size, 0));
        for (int i = 0; i < size; ++i) {
            for (int j = 0; j < size; ++j) {
                long long total = 0;
                for (int k = 0; k < size; ++k) {
                    total += result[i][k] * a[k][j];
                }
                product[i][j] = total % MOD;
            }
        }
        result = product;
        multiplications += 1;
    }
    cout << multiplications << "\n";
    for (int i = 0; i < size; ++i) {
        for (int j = 0; j < size; ++j) {
            cout << result[i][j] << (j + 1 < size ? " " : "\n");
        }
    }
    return 0;
}
