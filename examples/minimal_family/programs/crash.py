print("before")
raise SystemExit(3)
