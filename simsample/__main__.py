from simsample.console import main

main()
