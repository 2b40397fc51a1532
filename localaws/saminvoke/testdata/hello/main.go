// Command hello is the smallest program saminvoke's test builds.
package main

func main() {}
