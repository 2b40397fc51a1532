package constrained

func onlyOnAmd64() int { return 1 }
