// Command hello is the smallest program lambdabuild's test builds.
package main

func main() {}
