package broken

func Broken() int { return "not an int" }
